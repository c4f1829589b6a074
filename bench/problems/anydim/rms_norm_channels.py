# KernelBench level 1 36 (RMSNorm over the 64 channels of NCHW, no weight), at its shape: the [outer, dim, inner] families (core/ops/cards.cpp).
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)


def get_inputs():
    return [torch.rand(112, 64, 512, 512)]


def get_init_inputs():
    return []
