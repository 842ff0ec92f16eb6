usmp_macros::usmp_pools! {
    model = "fail_unreadable_model.rs",
    pools {
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
