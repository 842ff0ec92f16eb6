#!/usr/bin/env bash
# Counts guest instructions per inference and per operator call of the bench's models
# in QEMU with -icount shift=0 (src/main.rs says how), on the Cortex-M4 (mps2-an386), the
# Cortex-M3 (mps2-an385: no DSP extension, the kernels' portable paths), a Cortex-M0 build
# (thumbv6m: Armv6-M's instructions, run by the an385's M3), the Cortex-M55 (mps3-an547),
# that one built twice: for Armv8-M Mainline as it is (Cortex-M55 in counts.txt) and with
# -C target-cpu=cortex-m55 (Cortex-M55-Helium: the kernels' Helium loops, which a build
# for the core itself takes), and RV32IMC on QEMU's virt board (RISC-V: the kernels'
# portable paths, counted by minstret). Each build runs twice: the two runs must print the
# same counts (they are deterministic). Then each model's count is compared with
# counts.txt: one that grew by more than 1 % fails the run; one that fell by more than 1 %
# asks for counts.txt to be updated. Prints the tables docs/performance.md shows.
# Needs: the five rustup targets, qemu-system-arm and qemu-system-riscv32.
# `bench.sh --write` rewrites counts.txt with this run's counts.
set -euo pipefail
cd "$(dirname "$0")"
write=${1:-}

# As check-firmware.sh: the checkout and cargo's registry mapped to fixed names (appended
# to .cargo/config.toml's rustflags for the target).
root=$(cd ../.. && pwd)
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
# `flags TARGET [CPU]`.
flags() {
  local cpu=${2:+, \"-C\", \"target-cpu=$2\"}
  echo "target.$1.rustflags = [\"--remap-path-prefix=$root=/usmp\", \"--remap-path-prefix=$registry=/registry\"$cpu]"
}

mkdir -p target
status=0
: > target/counts.txt
# TARGET or TARGET:CPU, the latter in a target directory of its own (its flags differ).
for build in thumbv7em-none-eabihf thumbv7m-none-eabi thumbv6m-none-eabi \
  thumbv8m.main-none-eabihf thumbv8m.main-none-eabihf:cortex-m55 riscv32imc-unknown-none-elf; do
  target=${build%%:*}
  cpu=${build#"$target"}
  cpu=${cpu#:}
  name=$target${cpu:+-$cpu}
  for run in 1 2; do
    cargo run --release --target "$target" --config "$(flags "$target" "$cpu")" \
      ${cpu:+--target-dir "target/$cpu"} > "target/bench-$name-$run.log"
  done
  if ! cmp -s "target/bench-$name-1.log" "target/bench-$name-2.log"; then
    echo "error: two runs of $name counted differently:" >&2
    diff "target/bench-$name-1.log" "target/bench-$name-2.log" >&2 || true
    status=1
  fi
  log=target/bench-$name-1.log
  core=$(sed -n 's/^bench on \([A-Za-z0-9-]*\).*/\1/p' "$log")
  echo
  if [ -n "$cpu" ]; then
    core=$core-Helium
    echo "built with -C target-cpu=$cpu:"
  fi
  sed -n 's/^bench on //p' "$log"
  echo
  echo "| model | operator | calls | instructions |"
  echo "|---|---|---:|---:|"
  awk '$1 == "model" { m = $2; printf "| %s | (inference) | %s | %s |\n", m, $4, $3 }
       $1 == "op" { printf "| %s | %s | %s | %s |\n", m, $2, $4, $3 }' "$log"
  awk -v core="$core" '$1 == "model" { print core, $2, $3 }' "$log" >> target/counts.txt
done

if [ "$write" = --write ]; then
  {
    echo "# Guest instructions per inference, counted in QEMU with -icount shift=0 by"
    echo "# examples/firmware-bench/bench.sh --write. CI fails when one grows by more than 1 %."
    cat target/counts.txt
  } > counts.txt
  echo
  echo "wrote counts.txt"
  exit $status
fi
echo
# "Cortex-M4 person_detect 94366009": each against the committed figure.
while read -r core model count; do
  committed=$(awk -v c="$core" -v m="$model" '$1 == c && $2 == m { print $3 }' counts.txt)
  if [ -z "$committed" ]; then
    echo "error: counts.txt has no figure for $model on $core: run bench.sh --write" >&2
    status=1
  elif [ $((count * 100)) -gt $((committed * 101)) ]; then
    echo "error: $model on $core: $count instructions, more than 1 % over counts.txt's $committed; make it faster, or run bench.sh --write and say why in the commit" >&2
    status=1
  elif [ $((count * 100)) -lt $((committed * 99)) ]; then
    echo "$model on $core: $count instructions, more than 1 % under counts.txt's $committed: run bench.sh --write to keep the gain"
  else
    echo "$model on $core: $count instructions (counts.txt: $committed)"
  fi
done < target/counts.txt
exit $status
