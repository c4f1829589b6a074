# KernelBench level 1, problem 99 (TripletMarginLoss(margin 1.0)), at KernelBench's own shape: anchor, positive, negative (32768, 8192).
import torch


class Model(torch.nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)


def get_inputs():
    return [torch.rand(32768, 8192) * torch.rand(()), torch.rand(32768, 8192), torch.rand(32768, 8192)]


def get_init_inputs():
    return [1.0]
