# KernelBench level 1, problem 49 (max over dim 1), at KernelBench's own shape: x (128, 4096, 4095).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.max(x, dim=1)[0]


def get_inputs():
    return [torch.rand(128, 4096, 4095)]


def get_init_inputs():
    return []
