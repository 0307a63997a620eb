#!/usr/bin/env bash
# Input for the grep-q lint's self-check: a pipe into grep -q, which it must refuse.
sed -n '/start/,$p' "$1" | grep -q "reply"
