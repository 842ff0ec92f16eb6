// Reading (a bad unit, an unknown key) and validation (alignment 3, an unknown
// algorithm, a pool declared twice) report together.
usmp_macros::usmp_pools! {
    model = "../../../../examples/models/kws.json",
    algorithm = "magic",
    pools {
        sram: workspace(align = 3, size = 8 KB),
        flash: constant(colour = "red"),
        sram: workspace(),
    }
}

fn main() {}
