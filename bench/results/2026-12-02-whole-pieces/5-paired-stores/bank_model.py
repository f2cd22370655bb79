# Shared-memory wavefronts of band_qk's staging stores (seed problem, wgmma kernel), old vs new.
H,N,C,LDS,j0=12,4096,513,520,0
def wavefronts(words):  # words: list of word addresses (one per active lane)
    banks={}
    for w in set(words): banks.setdefault(w%32,set()).add(w)
    return max(len(v) for v in banks.values())
import random
tot_old=tot_new=n_old=n_new=0
for blk in random.sample(range(H*N//64),60):
    hd=blk%H; t0=blk//H*64
    for warp in range(4):
        for h in range(2):
            off={}
            for g in range(8):
                r=16*warp+g+8*h; st=((t0+r)*H+hd)*C+j0; mis=st%8
                off[g]=r*LDS+mis-r
            for nt in range(8):
                kb=0
                # old: two STS.U16 (e1=0,1), each lane at element off+kb+8nt+2t4+e1
                for e1 in (0,1):
                    ws=[(off[g]+kb+8*nt+2*t4+e1)//2 for g in range(8) for t4 in range(4)]
                    tot_old+=wavefronts(ws); n_old+=1
                # new: one STS.32: even rows at off+8nt+2t4, odd rows at +1
                ws=[(off[g]+8*nt+2*t4+(off[g]&1))//2 for g in range(8) for t4 in range(4)]
                tot_new+=wavefronts(ws); n_new+=1
print("old: %.2f wavefronts per STS.U16, %d per row-tile-pair"%(tot_old/n_old, 0))
print("new: %.2f wavefronts per STS.32"%(tot_new/n_new))
print("wavefronts per (nt,h): old %.2f new %.2f"%(2*tot_old/n_old, tot_new/n_new))
