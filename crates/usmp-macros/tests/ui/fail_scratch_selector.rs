usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    scratch = [layer("conv2d", im2col = 64)],
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
