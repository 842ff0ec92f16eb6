usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(),
        flash: constant(),
    }
    models {
        kws: model(path = "../../../../examples/models/kws.json"),
    }
}

fn main() {}
