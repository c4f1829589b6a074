# KernelBench level 1, problem 91 (reverse cumsum over dim 1 (flip, cumsum, flip)), at KernelBench's own shape: x (32768, 32768).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    return [torch.rand(32768, 32768)]


def get_init_inputs():
    return []
