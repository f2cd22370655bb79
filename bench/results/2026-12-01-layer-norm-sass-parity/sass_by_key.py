import json,sys,glob,subprocess,os,hashlib,re
out={}
cub='/tmp/whl/x/nvidia/cu13/bin/cuobjdump'
for f in glob.glob(sys.argv[1]+'/*/*.bjk'):
    b=open(f,'rb').read()
    i=b.find(b'{"arch"')
    d,_=json.JSONDecoder().raw_decode(b[i:].decode('utf-8','replace'))
    e=b.find(b'\x7fELF')
    open('/tmp/x.cubin','wb').write(b[e:])
    s=subprocess.run([cub,'-sass','/tmp/x.cubin'],capture_output=True,text=True).stdout
    ins=[re.sub(r'/\*[0-9a-f]{4,}\*/','',l).strip() for l in s.splitlines() if re.match(r'\s+/\*[0-9a-f]{4}\*/',l)]
    fam=d['key'].get('family') or re.search(r'extern "C" __global__[^\n]*\n(\w+)',d['key']['source']).group(1)
    key=(fam, d['problem'])
    out[str(key)]=dict(regs=d['registers'],n=len(ins),h=hashlib.sha1('\n'.join(ins).encode()).hexdigest())
json.dump(out,open(sys.argv[2],'w'),indent=0,sort_keys=True)
print(len(out))
