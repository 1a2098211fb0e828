"""The PyTorch peer, by concern; scripts/torch_peer.py is its entry point."""
import logging

# The peer environment leaves triton out (it is for GPU kernels; torch.compile on the CPU
# generates C++), and PyTorch 2.x then logs at import, with a timestamp and a process id, that
# its FLOP counter cannot count triton kernels. The peer counts none: the line is noise in every
# run's output, so it is silenced here, before anything imports torch.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)
