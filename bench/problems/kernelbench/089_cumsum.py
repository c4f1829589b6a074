# KernelBench level 1, problem 89 (cumsum over dim 1), at KernelBench's own shape: x (32768, 32768).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.rand(32768, 32768)]


def get_init_inputs():
    return []
