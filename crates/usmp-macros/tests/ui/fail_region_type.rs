// A region is the name of a memory.x MEMORY region, not a number.
usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        dtcm: workspace(size = 16 KiB, region = 3),
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
