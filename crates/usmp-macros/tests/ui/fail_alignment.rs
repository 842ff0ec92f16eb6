usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(align = 24),
        flash: constant(),
    }
}

fn main() {}
