#!/usr/bin/env bash
# Session 16, device run 4: 40 shapes drawn with a new seed (4) in bf16, with 256x128 tiles in the 16-bit space (the
# tall-tile change of run 3; seed 4 was not looked at before): a held-out check of the planner's rules.
SEED=4 exec bash "$(dirname "$0")/s16_run1.sh"
