// `stages` is "auto", "off" or [first, last] pairs; each mistake named at its place.
mod words {
    usmp_macros::usmp_pools! {
        model = "../../../../fixtures/tflite/models/tall.tflite",
        kernels = true,
        stages = "on",
        pools {
            sram: workspace(),
            flash: constant(),
        }
    }
}

mod pairs {
    usmp_macros::usmp_pools! {
        model = "../../../../fixtures/tflite/models/tall.tflite",
        kernels = true,
        stages = [[0, 1], [2]],
        pools {
            sram: workspace(),
            flash: constant(),
        }
    }
}

mod calls {
    usmp_macros::usmp_pools! {
        model = "../../../../fixtures/tflite/models/tall.tflite",
        kernels = true,
        stages = [[1, 0], [0, 400]],
        pools {
            sram: workspace(),
            flash: constant(),
        }
    }
}

fn main() {}
