# KernelBench-style problem: log-softmax over the last dimension.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(8192, 16384)]


def get_init_inputs():
    return []
