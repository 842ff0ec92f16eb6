usmp_macros::usmp_pools! {
    model = "models/nope.tflite",
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
