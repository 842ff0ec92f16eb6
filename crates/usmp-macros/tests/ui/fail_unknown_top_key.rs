usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    optimise = true,
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
