usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(),
        flash: constant(),
        sram: workspace(size = 1 MiB),
    }
}

fn main() {}
