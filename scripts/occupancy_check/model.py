#!/usr/bin/env python3
"""Executable summary of cuda_occupancy.h (CUDA 13.0) rules, as read from the header.

Recomputes every row of crates/warpscope-core/tests/data/occupancy_calculator.csv
(max_active_blocks_per_sm and limiting_factors) and every non-error row of
occupancy_h100.csv (the driver's answers and the measured residencies) and prints the
mismatch counts (0 and 0 when written, 2026-11-26). Only the default device state (no
carveout or cache preference) and partitioned global caching off are modelled.
Usage: python3 scripts/occupancy_check/model.py
"""
import os

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates", "warpscope-core", "tests", "data")
INT_MAX = 2**31-1
def ru(x, y): return -(-x // y) * y
def dru(x, y): return -(-x // y)
def max_blocks(M, m):
    if M in (5,6): return 32
    if M == 7: return 16 if m == 5 else 32
    if M == 8: return 32 if m == 0 else (24 if m == 9 else 16)
    if M == 9: return 32
    if M == 10: return 24 if m == 1 else 32
    if M == 11: return 24 if m == 0 else 32
    if M == 12: return 24
def gran_smem(M): return 256 if M <= 7 else 128
def subparts(M, m): return 2 if (M == 6 and m == 0) else 4
def maxregs(M): return 255 if M <= 6 else 256
def carve_steps(M, m):
    K = 1024
    if M == 7: return [32*K, 64*K] if m == 5 else [0, 8*K, 16*K, 32*K, 64*K, 96*K]
    if M == 8: return [0,8*K,16*K,32*K,64*K,100*K,132*K,164*K] if m in (0,7) else [0,8*K,16*K,32*K,64*K,100*K]
    if M in (9,10,11): return [0,8*K,16*K,32*K,64*K,100*K,132*K,164*K,196*K,228*K]
    if M == 12: return [0,8*K,16*K,32*K,64*K,100*K]
def align_up(M, m, size):
    for s in carve_steps(M, m):
        if size <= s: return s
    return None
def regs_limit(M, m, p, regs, block):
    w = dru(block, p['warp'])
    rpw = ru(regs * p['warp'], 256)
    per_cta = rpw * w
    assumed = rpw * ru(w, subparts(M, m))
    if p['regs_block'] < assumed or p['regs_block'] < per_cta or regs > maxregs(M): return 0
    if rpw == 0: return INT_MAX
    sp = subparts(M, m)
    return ((p['regs_sm'] // sp) // rpw) * sp // w
def occ(M, m, p, regs, static, dyn, block, maxdyn):
    lr = regs_limit(M, m, p, regs, block)
    if M == 6 and m == 0 and lr:
        if regs_limit(6, 1, p, regs, block) == 0: lr = 0
    lw = 0 if block > p['max_tpb'] else (p['threads_sm'] // p['warp']) // dru(block, p['warp'])
    lb = max_blocks(M, m)
    # shared
    pref = p['smem_sm'] if M < 7 else align_up(M, m, p['smem_sm'])
    st = static + p['reserved']
    alloc = ru(st + dyn, gran_smem(M))
    maxuse = st + maxdyn
    if M <= 6: lim = p['smem_block']
    else: lim = p['smem_optin'] if maxuse > p['smem_block'] else p['smem_block']
    if M >= 8: lim += p['reserved']
    if dyn > maxdyn or alloc > lim: ls = 0
    else:
        if pref >= alloc: smsm = pref
        else: smsm = align_up(M, m, alloc) if M >= 7 else p['smem_sm']
        ls = smsm // alloc if alloc > 0 else INT_MAX
    lim_all = min(lr, ls, lw, lb)
    f = (1 if lim_all == lw else 0) | (2 if lim_all == lr else 0) | (4 if lim_all == ls else 0) | (8 if lim_all == lb else 0)
    return lim_all, f

# calculator file
props = {}
bad = 0; n = 0
for line in open(os.path.join(DATA, 'occupancy_calculator.csv')):
    if line.startswith('# cc '):
        cc, rest = line[5:].split(':', 1)
        kv = dict(x.strip().split('=') for x in rest.replace(' (reference only)', '').split(','))
        props[cc] = dict(threads_sm=int(kv['max_threads_per_sm']), regs_sm=int(kv['regs_per_sm']), regs_block=int(kv['regs_per_block']),
                         smem_sm=int(kv['max_shared_per_sm']), smem_block=int(kv['max_shared_per_block']), smem_optin=int(kv['max_shared_per_block_optin']),
                         reserved=int(kv['reserved_shared_per_block']), warp=32, max_tpb=1024)
    if line[0].isdigit():
        cc, r, s, d, b, res, f, err = line.strip().split(',')
        M, m = map(int, cc.split('.'))
        p = props[cc]
        got = occ(M, m, p, int(r), int(s), int(d), int(b), p['smem_optin'] - int(s) if p['smem_optin'] >= int(s) else 0)
        n += 1
        if got != (int(res), int(f)):
            bad += 1
            if bad < 10: print('calc mismatch', line.strip(), got)
print('calculator rows', n, 'mismatches', bad)
# driver file
maxdyn = {}; n = bad = 0
for line in open(os.path.join(DATA, 'occupancy_h100.csv')):
    if line.startswith('# attributes:'):
        kv = dict(x.strip().split('=') for x in line[len('# attributes:'):].split(','))
        p = dict(threads_sm=int(kv['max_threads_per_sm']), regs_sm=int(kv['regs_per_sm']), regs_block=int(kv['regs_per_block']),
                 smem_sm=int(kv['max_shared_per_sm']), smem_block=int(kv['max_shared_per_block']), smem_optin=int(kv['max_shared_per_block_optin']),
                 reserved=int(kv['reserved_shared_per_block']), warp=int(kv['warp_size']), max_tpb=int(kv['max_threads_per_block']))
    elif line.startswith('# variant '):
        name = line[10:line.index(':')]
        maxdyn[name] = int(line.split('max_dynamic_shared=')[1].split()[0])
    elif not line.startswith('#') and not line.startswith('variant,'):
        v, r, s, d, b, res, err = line.rstrip('\n').split(',')
        if err: continue
        got, _ = occ(9, 0, p, int(r), int(s), int(d), int(b), maxdyn[v.replace('measured:', '')])
        n += 1
        if got != int(res):
            bad += 1; print('drv mismatch', line.strip(), got)
print('driver rows', n, 'mismatches', bad)
