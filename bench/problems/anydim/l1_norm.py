# KernelBench level 1 38 (L1 normalization over dim 1, no eps), at its shape: l1_norm_dim on contiguous rows.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(32768, 65535)]


def get_init_inputs():
    return []
