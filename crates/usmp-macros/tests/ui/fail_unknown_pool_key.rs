usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: workspace(sise = 4096),
        flash: constant(),
    }
}

fn main() {}
