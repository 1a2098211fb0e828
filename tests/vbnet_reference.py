"""The seed-000 post's VBNet in PyTorch, as reconstructed from the post (its code lost the else
branches and outs.append): ResidualDown(down=False) uses a 3x3 CBR instead of the 2x2/stride-2
one, ResidualUp(up=False) a 3x3 CBR instead of ConvTranspose3d, every F.interpolate is trilinear
to the skip's size, Dropout3d(0.01) after every norm/relu. make(False) has 10,052,609 parameters
(CBR), make(True) 1,145,061 (the post's BottleNeck, N=4). Kept as the seed wrote it (one-letter
names included): tests/network_peer_test.py checks configs/vbnet.yaml against it.
"""
import torch, torch.nn as nn, torch.nn.functional as F  # noqa: E401
Norm = nn.BatchNorm3d
class BottleNeck(nn.Module):  # noqa: E302
    def __init__(s, i, o, k, drop, stride=1, padding=1, N=4):
        super().__init__()
        s.conv_1 = nn.Conv3d(i, o//N, 1); s.conv_2 = nn.Conv3d(o//N, o//N, k, stride=stride, padding=padding)  # noqa: E702
        s.conv_3 = nn.Conv3d(o//N, o, 1); s.norm = Norm(o); s.relu=nn.ReLU(); s.drop=nn.Dropout3d(drop)  # noqa: E702
    def forward(s, x): return s.drop(s.relu(s.norm(s.conv_3(s.conv_2(s.conv_1(x))))))  # noqa: E301,E704
class CBR(nn.Module):  # noqa: E302
    def __init__(s, i, o, k, drop, stride=1, padding=1):
        super().__init__()
        s.conv = nn.Conv3d(i, o, k, stride=stride, padding=padding); s.norm=Norm(o); s.relu=nn.ReLU(); s.drop=nn.Dropout3d(drop)  # noqa: E702,E501
    def forward(s, x): return s.drop(s.relu(s.norm(s.conv(x))))  # noqa: E301,E704
def make(bott):  # noqa: E302
    C = BottleNeck if bott else CBR
    class RD(nn.Module):
        def __init__(s, i, o, k, drop, n, down=True):
            super().__init__()
            s.down = C(i, o, 2, drop, stride=2, padding=0) if down else C(i, o, 3, drop, stride=1, padding=1)
            s.convs = nn.ModuleList([C(o, o, k, drop) for _ in range(n)])
        def forward(s, x):  # noqa: E301
            res = s.down(x); out = res  # noqa: E702
            for c in s.convs: out = c(out)  # noqa: E701
            return out + res
    class RU(nn.Module):  # noqa: E301
        def __init__(s, i, o, k, drop, n, up=True):
            super().__init__()
            s.deconv = nn.ConvTranspose3d(i, o, 2, stride=2) if up else C(i, o, 3, drop, stride=1, padding=1)
            s.convs = nn.ModuleList([C(2*o, o, k, drop)] + [C(o, o, k, drop) for _ in range(n-1)])
        def forward(s, big, small):  # noqa: E301
            x = s.deconv(small); x = F.interpolate(x, big.size()[-3:], mode='trilinear', align_corners=False); res = x  # noqa: E702,E501
            x = torch.cat([big, x], 1)
            for c in s.convs: x = c(x)  # noqa: E701
            return x + res
    class VB(nn.Module):  # noqa: E301
        def __init__(s, level=5, drop=0.01):
            super().__init__(); s.level=level  # noqa: E702
            s.downs = nn.ModuleList([RD(1,16,3,drop,1,False), RD(16,32,3,drop,2)]); ch=32  # noqa: E702,E231
            for i in range(level-2): s.downs.append(RD(ch, ch*2, 3, drop, 3)); ch*=2  # noqa: E701,E702
            s.ups = nn.ModuleList()
            for i in range(level-3): s.ups.append(RU(ch, ch//2, 3, drop, 3)); ch//=2  # noqa: E701,E702
            s.ups.append(RU(ch, ch//2, 3, drop, 2)); ch//=2  # noqa: E702
            s.ups.append(RU(ch, ch//2, 3, drop, 1, False)); ch//=2  # noqa: E702
            s.classifier = nn.Conv3d(ch, 1, 1)
        def forward(s, x):  # noqa: E301
            outs=[]  # noqa: E225
            for l in s.downs: x = l(x); outs.append(x)  # noqa: E701,E702,E741
            small = outs[-1]
            for i,l in enumerate(s.ups): small = l(outs[s.level-i-2], small)  # noqa: E701,E231,E741
            return s.classifier(small)
    return VB()
