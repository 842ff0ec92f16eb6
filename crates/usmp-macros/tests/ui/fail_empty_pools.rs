usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {}
}

fn main() {}
