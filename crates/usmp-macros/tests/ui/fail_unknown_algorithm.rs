usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    algorithm = "fastest",
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
