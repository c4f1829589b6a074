# KernelBench level 1, problem 25 (swish), at KernelBench's own shape: x (4096, 393216) float32, uniform [0, 1).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.rand(4096, 393216)]


def get_init_inputs():
    return []
