#!/usr/bin/env bash
# Session 20, device runs 9 and 10 (second review): the refactored experiment on one shape, before and after its
# "unsplit" column kept the tuner's new split variants apart.
export PYTHONPATH=$PWD; timeout 300 python3 notes/experiments/tma_split_k.py 134x5120x13824:NT 2>&1 | grep -v "Warning\|warn_once" | tail -5
