#!/usr/bin/env bash
# The sweeps of `{command}`, each as a Slurm job array of {shards} shards and a merge job
# (scripts/slurm/submit-sweep.sh). Run from the repository root on a login node whose file system
# the compute nodes share; when every merge job has ended, rerun the report with --sweeps {sweeps_dir}
# (it retrains and refits to the same bytes and takes each sweep from there).
set -euo pipefail
