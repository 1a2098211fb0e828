"""The PyTorch peer, by concern; scripts/torch_peer.py is its entry point."""
