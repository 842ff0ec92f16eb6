// Streamed stages run on usmp-kernels' stage kernel: refused for a model that does not.
usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    stages = "auto",
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
