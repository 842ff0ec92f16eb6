usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        sram: fast(),
        flash: constant(),
    }
}

fn main() {}
