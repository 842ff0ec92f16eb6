usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(size = 17179869184 GiB),
        flash: constant(),
    }
}

fn main() {}
