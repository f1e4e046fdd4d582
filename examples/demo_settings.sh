# What besides the seed decides a CPU run's numbers, sourced by examples/demo.sh, two_pass.sh
# and noise_attack.sh, for every command started after it (xlpe-train's fairseq-train,
# fairseq-generate); the demo's model size and training settings are xlpe-train's size and
# schedule demo (docs/models.md). Torch splits each matrix product and reduction
# among its threads, and another split rounds differently: by default it takes one thread per
# core it may run on, and on the demo's data 1 and 2 threads (`taskset -c 0` against a plain
# run) give different weights after 30 updates. The kernels' instruction set does too:
# AVX-512 and AVX2 kernels give different weights after 30 updates here. With a fixed thread
# count and AVX2 kernels a run depends on neither the cores nor the CPU generation (the
# README's numbers are from DEMO_THREADS=2; other values run as well, with other numbers).
# MKL_DYNAMIC=FALSE: else MKL, and torch with it, takes no more threads than physical cores
# (one on a 2-vCPU machine with hyperthreading).
DEMO_THREADS=${DEMO_THREADS:-2}
export OMP_NUM_THREADS=$DEMO_THREADS MKL_NUM_THREADS=$DEMO_THREADS MKL_DYNAMIC=FALSE
export ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2

# the demo schedule's updates (xlpe-train --size demo; a test keeps them equal)
DEMO_UPDATES=500
