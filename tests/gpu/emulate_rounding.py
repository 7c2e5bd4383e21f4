#!/usr/bin/env python3
"""Where the tolerances of tests/gpu/cuda_backend_test.cpp's equivalence tests come from.

Emulates on a CPU what differs between the cuda backend and the cpu backend, on the test's model
and protocol (hidden 64, ffn 4x, 16 tokens, stages 0 and 1 of 2 layers each, 4 micro-batches,
3 steps, SGD lr 0.05 and Adam lr 0.003, the test's input patterns), against the same run in plain
fp32 (numpy's float32 GEMMs):
  fp32: the order of the sums (cuBLAS's against OpenBLAS's), as GEMMs accumulated in float64 and
        rounded to float32;
  tf32, bf16: cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16BF, each fp32 operand rounded to 10
        or 7 mantissa bits (to nearest, ties to even), products accumulated in fp32.
It reports the test's measures: over outputs, input gradients, weight gradients and parameters,
the largest element difference relative to the tensor's largest magnitude (fp32 with SGD) or the
normwise |a - b| / |b| (Adam, and tf32/bf16); Adam's biases are not compared; and the loss's
relative difference.
Why: rounding flips the sign of pre-activations near zero, so ReLU masks differ in a few elements,
whose gradients then differ by their whole value (element-wise up to 4e-2 in TF32 with SGD here).
And Adam divides each update by its gradient's running magnitude, so an element whose gradient is
near eps (1e-8) or changes sign moves by up to 2 lr on a difference of rounding: element-wise, fp32
Adam parameters differ by up to 1e-3 of the largest on summation order alone, biases (starting at
zero) by 2.0 in TF32.
The weights are drawn as MlpStage draws them (uniform, 1/sqrt(h) and 0.5/sqrt(f)), from numpy's
generator rather than mt19937_64: the error's size depends on the magnitudes, not on the values.
Run: python3 tests/gpu/emulate_rounding.py [--seeds N]   (needs numpy; 20 draws by default)
"""
import argparse

import numpy as np

H, FFN, T, MB, STEPS = 64, 4, 16, 4, 3


def round_mantissa(x, bits):
    """x (float32) rounded to nearest, ties to even, keeping `bits` of the 23 mantissa bits."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    drop = 23 - bits
    half = 1 << (drop - 1)
    lsb = (u >> drop) & 1
    u = ((u + half - 1 + lsb) >> drop) << drop
    return u.astype(np.uint32).view(np.float32)


def make_gemm(math):
    if math == "ref":
        return lambda a, b: a @ b
    if math == "fp32":
        return lambda a, b: (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    bits = {"tf32": 10, "bf16": 7}[math]
    return lambda a, b: round_mantissa(a, bits) @ round_mantissa(b, bits)


def pattern(n, salt, scale):
    i = np.arange(n, dtype=np.float64)
    return (scale * np.sin(0.37 * i + 1.3 * salt)).astype(np.float32)


class Stage:
    def __init__(self, rng, layers, last, optimizer, math):
        f = H * FFN
        self.layers = []
        for _ in range(layers):
            self.layers.append({
                "w1": rng.uniform(-1, 1, (H, f)).astype(np.float32) / np.float32(np.sqrt(H)),
                "b1": np.zeros(f, np.float32),
                "w2": rng.uniform(-1, 1, (f, H)).astype(np.float32) * np.float32(0.5 / np.sqrt(f)),
                "b2": np.zeros(H, np.float32)})
        self.grads = [{k: np.zeros_like(v) for k, v in L.items()} for L in self.layers]
        self.m = [{k: np.zeros_like(v) for k, v in L.items()} for L in self.layers]
        self.v = [{k: np.zeros_like(v) for k, v in L.items()} for L in self.layers]
        self.last, self.optimizer, self.gemm = last, optimizer, make_gemm(math)
        self.teacher = rng.uniform(-1, 1, (H, H)).astype(np.float32) * np.float32(2 / np.sqrt(H))
        self.stash, self.steps, self.loss_sum, self.losses = {}, 0, 0.0, 0

    def forward(self, mb, x):
        stash, cur = [], x.reshape(T, H).copy()
        for L in self.layers:
            a = self.gemm(cur, L["w1"]) + L["b1"]
            stash.append((cur.copy(), a))
            cur = cur + self.gemm(np.maximum(a, 0), L["w2"]) + L["b2"]
        if self.last:
            target = np.tanh(x.reshape(T, H) @ self.teacher)
            d = cur.astype(np.float64) - target
            self.loss_sum += 0.5 * np.sum(d * d) / d.size
            self.losses += 1
            stash.append((d / (d.size * MB)).astype(np.float32))
        self.stash[mb] = stash
        return cur.ravel()

    def backward(self, mb, dy):
        stash = self.stash.pop(mb)
        g = stash.pop().copy() if self.last else dy.reshape(T, H).copy()
        for L, G, (x, a) in reversed(list(zip(self.layers, self.grads, stash))):
            r = np.maximum(a, 0)
            G["w2"] += self.gemm(r.T, g)
            G["b2"] += g.sum(0)
            da = self.gemm(g, L["w2"].T) * (a > 0)
            G["w1"] += self.gemm(x.T, da)
            G["b1"] += da.sum(0)
            g = g + self.gemm(da, L["w1"].T)
        return g.ravel()

    def step(self, lr):
        self.steps += 1
        for L, G, M, V in zip(self.layers, self.grads, self.m, self.v):
            for k in L:
                if self.optimizer == "adam":
                    M[k] = np.float32(0.9) * M[k] + np.float32(0.1) * G[k]
                    V[k] = np.float32(0.999) * V[k] + np.float32(0.001) * G[k] * G[k]
                    c1, c2 = np.float32(1 - 0.9 ** self.steps), np.float32(1 - 0.999 ** self.steps)
                    L[k] -= np.float32(lr) * (M[k] / c1) / (np.sqrt(V[k] / c2) + np.float32(1e-8))
                else:
                    L[k] -= np.float32(lr) * G[k]
                G[k][:] = 0
        loss = self.loss_sum / self.losses if self.losses else float("nan")
        self.loss_sum, self.losses = 0.0, 0
        return loss


def max_rel(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b)) / max(np.max(np.abs(b)), 1e-12))


def norm_rel(a, b):
    b = b.astype(np.float64)
    return float(np.linalg.norm(a.astype(np.float64) - b) / max(np.linalg.norm(b), 1e-30))


def compare(math, seed):
    """(worst tensor difference, worst loss difference) of one weight draw."""
    worst, worst_loss = 0.0, 0.0
    for optimizer, lr in (("sgd", 0.05), ("adam", 0.003)):
        diff = max_rel if math == "fp32" and optimizer == "sgd" else norm_rel
        for last in (False, True):
            stages = [Stage(np.random.default_rng(seed), 2, last, optimizer, m) for m in ("ref", math)]
            for it in range(STEPS):
                for mb in range(MB):
                    x = pattern(T * H, 10 * it + mb, 0.5)
                    outs = [s.forward(mb, x) for s in stages]
                    if not last:
                        worst = max(worst, diff(outs[1], outs[0]))
                for mb in range(MB):
                    dy = pattern(T * H, 100 + 10 * it + mb, 0.01)
                    gins = [s.backward(mb, dy) for s in stages]
                    if last:
                        worst = max(worst, diff(gins[1], gins[0]))
                for G0, G1 in zip(stages[0].grads, stages[1].grads):
                    worst = max(worst, *(diff(G1[k], G0[k]) for k in G0))
                losses = [s.step(lr) for s in stages]
                if last:
                    worst_loss = max(worst_loss, abs(losses[1] - losses[0]) / abs(losses[0]))
                for L0, L1 in zip(stages[0].layers, stages[1].layers):
                    keys = ("w1", "w2") if optimizer == "adam" else ("w1", "b1", "w2", "b2")
                    worst = max(worst, *(diff(L1[k], L0[k]) for k in keys))
    return worst, worst_loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    for math in ("fp32", "tf32", "bf16"):
        runs = [compare(math, seed) for seed in range(args.seeds)]
        print(f"{math}: worst of {args.seeds} weight draws: tensors {max(r[0] for r in runs):.1e}, "
              f"loss {max(r[1] for r in runs):.1e}")


if __name__ == "__main__":
    main()
