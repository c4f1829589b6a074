# KernelBench level 1, problem 98 (KL divergence of log(predictions), batchmean), at KernelBench's own shape: predictions, targets (16384, 16384), rows softmaxed.
import torch


class Model(torch.nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')


def get_inputs():
    return [(torch.rand(16384, 16384) * torch.rand(())).softmax(dim=-1), torch.rand(16384, 16384).softmax(dim=-1)]


def get_init_inputs():
    return []
