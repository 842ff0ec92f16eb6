// The macro writes no linker fragment: a region would silently place nothing.
usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    pools {
        dtcm: workspace(size = 16 KiB, region = "DTCM"),
        sram: workspace(),
        flash: constant(),
    }
}

fn main() {}
