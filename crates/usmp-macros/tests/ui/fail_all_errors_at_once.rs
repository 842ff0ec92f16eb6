usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    algorithm = "magic",
    pools {
        sram: workspace(align = 3),
        flash: constant(),
        sram: workspace(),
    }
}

fn main() {}
