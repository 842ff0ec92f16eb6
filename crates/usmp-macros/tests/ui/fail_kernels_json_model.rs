usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    kernels = true,
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
