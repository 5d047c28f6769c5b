uchar xtime(uchar b)
{
    return (uchar)((b << 1) ^ ((b & 0x80) ? 0x1b : 0x00));
}

void add_round_key(uchar *s, __constant uchar *k)
{
    for (int i = 0; i < 16; i++)
        s[i] ^= k[i];
}

void sub_bytes(uchar *s, __constant uchar *sbox)
{
    for (int i = 0; i < 16; i++)
        s[i] = sbox[s[i]];
}

/* state byte (row r, column c) is s[r + 4c]; row r rotates left by r */
void shift_rows(uchar *s)
{
    uchar t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++)
            t[r + 4 * c] = s[r + 4 * ((c + r) & 3)];
    for (int i = 0; i < 16; i++)
        s[i] = t[i];
}

void mix_columns(uchar *s)
{
    for (int c = 0; c < 4; c++) {
        uchar *col = s + 4 * c;
        uchar a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
        uchar all = a0 ^ a1 ^ a2 ^ a3;
        col[0] = a0 ^ all ^ xtime(a0 ^ a1);
        col[1] = a1 ^ all ^ xtime(a1 ^ a2);
        col[2] = a2 ^ all ^ xtime(a2 ^ a3);
        col[3] = a3 ^ all ^ xtime(a3 ^ a0);
    }
}

__kernel void aes128_encrypt(__global const uchar *in, __global uchar *out,
                             __constant uchar *rk, __constant uchar *sbox, ulong n)
{
    size_t gid = get_global_id(0);
    if (gid >= n)
        return;
    size_t base = (gid - get_global_offset(0)) * 16;
    uchar s[16];
    for (int i = 0; i < 16; i++)
        s[i] = in[base + i];
    add_round_key(s, rk);
    for (int round = 1; round < 10; round++) {
        sub_bytes(s, sbox);
        shift_rows(s);
        mix_columns(s);
        add_round_key(s, rk + 16 * round);
    }
    sub_bytes(s, sbox);
    shift_rows(s);
    add_round_key(s, rk + 160);
    for (int i = 0; i < 16; i++)
        out[base + i] = s[i];
}
