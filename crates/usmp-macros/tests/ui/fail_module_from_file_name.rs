// The module is named after the file, and `hello-world` is not an identifier: the help
// says which key to add.
usmp_macros::usmp_pools! {
    model = "models/hello-world.tflite",
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
