# KernelBench level 1, problem 38 (x divided by the mean of |x| over dim 1), at KernelBench's own shape: x (32768, 65535).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(32768, 65535)]


def get_init_inputs():
    return []
