# KernelBench-style problem: x * sigmoid(x), two ATen calls that one SiLU kernel computes.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(16384, 16384)]


def get_init_inputs():
    return []
