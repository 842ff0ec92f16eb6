usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(size = 99999999999999999999999),
        flash: constant(),
    }
}

fn main() {}
