usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(size = 16 KB),
        flash: constant(),
    }
}

fn main() {}
