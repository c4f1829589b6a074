# KernelBench level 1, problem 47 (sum over dim 1, keepdim), at KernelBench's own shape: x (128, 4096, 4095).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(128, 4096, 4095)]


def get_init_inputs():
    return []
