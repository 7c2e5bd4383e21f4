#!/usr/bin/env python3
"""Generates shared-uplink.csv: what a 1 Gbit/s uplink leaves to one tenant when others come and go.

Model (ours, documented in README.md beside this file): every 0.5 s the number of other active
tenants n follows a birth-death chain on 0..4 (each step: +1 with p=0.3, -1 with p=0.3 when
possible); with processor sharing, our tenant gets 1/(n+1) of the link. Seeded, so the file is
reproducible: python3 gen_shared_uplink.py > shared-uplink.csv
"""
import random

rng = random.Random(7)
n = 0
print("time_s,rate")
print("# 1 Gbit/s shared by 1 + n tenants, n a birth-death chain on 0..4, 0.5 s steps, seed 7")
for step in range(40):  # 20 s
    print(f"{step * 0.5:.1f},{int(1000 / (n + 1))}Mbit")
    u = rng.random()
    if u < 0.3 and n < 4:
        n += 1
    elif u < 0.6 and n > 0:
        n -= 1
