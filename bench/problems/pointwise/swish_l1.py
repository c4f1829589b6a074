# KernelBench level 1 (Swish) at its shape: x * sigmoid(x), two ATen calls, one kernel.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(4096, 393216)]


def get_init_inputs():
    return []
