#!/usr/bin/env bash
# Session 24, device run 2: the host cost of a relaunch's pieces and their alternatives (notes/experiments/host_pieces.py).
PYTHONPATH=. python3 notes/experiments/host_pieces.py
