usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(size = 4 KiB),
        flash: constant(),
    }
}

fn main() {}
