usmp_macros::usmp_pools! {
    pools {
        sram: workspace(),
    }
}

fn main() {}
