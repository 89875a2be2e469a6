// Command tlogcheck is the second, independent implementation the receipt log's tests check against: Go's
// golang.org/x/mod/sumdb/tlog (the Go checksum database's RFC 6962 tree) and sumdb/note (C2SP signed
// notes). It reads one JSON job on stdin, builds its own tree from the records, and checks every
// checkpoint, inclusion proof and consistency proof the TypeScript log produced against that tree.
//
//	{"vkey": "...", "records": [base64...], "checkpoints": ["note"...],
//	 "inclusion": [{"index": i, "size": n, "proof": [base64...]}],
//	 "consistency": [{"from": m, "to": n, "proof": [base64...]}],
//	 "roots": [{"size": n, "root": base64}],
//	 "tiles": [{"path": "<L>/<N>[.p/<W>]", "data": base64}]}
//
// It prints {"checked": {...counts}, "errors": [...]} and exits 1 when any check failed.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type job struct {
	VKey        string   `json:"vkey"`
	Records     []string `json:"records"`
	Checkpoints []string `json:"checkpoints"`
	Inclusion   []struct {
		Index int64    `json:"index"`
		Size  int64    `json:"size"`
		Proof []string `json:"proof"`
	} `json:"inclusion"`
	Consistency []struct {
		From  int64    `json:"from"`
		To    int64    `json:"to"`
		Proof []string `json:"proof"`
	} `json:"consistency"`
	Roots []struct {
		Size int64  `json:"size"`
		Root string `json:"root"`
	} `json:"roots"`
	// Hash tiles as C2SP tlog-tiles serves them (path without the height: "0/x001/234.p/5").
	Tiles []struct {
		Path string `json:"path"`
		Data string `json:"data"`
	} `json:"tiles"`
}

type tree struct{ stored []tlog.Hash }

func (t *tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.stored)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = t.stored[x]
	}
	return out, nil
}

func hashes(list []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != tlog.HashSize {
			return nil, fmt.Errorf("proof hash %d is not base64 of 32 bytes", i)
		}
		copy(out[i][:], b)
	}
	return out, nil
}

func main() {
	var j job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fmt.Fprintln(os.Stderr, "tlogcheck: cannot read the job:", err)
		os.Exit(2)
	}
	t := &tree{}
	for n, rec := range j.Records {
		data, err := base64.StdEncoding.DecodeString(rec)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tlogcheck: record not base64:", err)
			os.Exit(2)
		}
		add, err := tlog.StoredHashes(int64(n), data, t)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tlogcheck:", err)
			os.Exit(2)
		}
		t.stored = append(t.stored, add...)
	}
	size := int64(len(j.Records))
	root := func(n int64) (tlog.Hash, error) { return tlog.TreeHash(n, t) }
	checked := map[string]int{}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	for _, r := range j.Roots {
		want, err := root(r.Size)
		if err != nil {
			fail("root %d: %v", r.Size, err)
		} else if want.String() != r.Root {
			fail("root %d: ours %s, tlog's %s", r.Size, r.Root, want)
		} else {
			checked["roots"]++
		}
	}

	if j.VKey != "" {
		v, err := note.NewVerifier(j.VKey)
		if err != nil {
			fail("vkey: %v", err)
		}
		for i, cp := range j.Checkpoints {
			if v == nil {
				break
			}
			n, err := note.Open([]byte(cp), note.VerifierList(v))
			if err != nil {
				fail("checkpoint %d: %v", i, err)
				continue
			}
			lines := strings.Split(n.Text, "\n")
			if len(lines) < 4 || lines[0] != v.Name() {
				fail("checkpoint %d: origin is not %q", i, v.Name())
				continue
			}
			cs, err := strconv.ParseInt(lines[1], 10, 64)
			if err != nil || cs > size {
				fail("checkpoint %d: size %q", i, lines[1])
				continue
			}
			want, err := root(cs)
			if err != nil || lines[2] != want.String() {
				fail("checkpoint %d: root %s is not tlog's %s for size %d", i, lines[2], want, cs)
				continue
			}
			checked["checkpoints"]++
		}
	}

	for _, p := range j.Inclusion {
		proof, err := hashes(p.Proof)
		if err != nil || p.Index >= size || p.Size > size {
			fail("inclusion %d in %d: %v", p.Index, p.Size, err)
			continue
		}
		th, err := root(p.Size)
		if err == nil {
			err = tlog.CheckRecord(proof, p.Size, th, p.Index, t.stored[tlog.StoredHashIndex(0, p.Index)])
		}
		if err != nil {
			fail("inclusion %d in %d: %v", p.Index, p.Size, err)
			continue
		}
		checked["inclusion"]++
	}

	for _, p := range j.Consistency {
		proof, err := hashes(p.Proof)
		if err != nil || p.To > size {
			fail("consistency %d..%d: %v", p.From, p.To, err)
			continue
		}
		from, err1 := root(p.From)
		to, err2 := root(p.To)
		if err1 != nil || err2 != nil {
			fail("consistency %d..%d: roots: %v %v", p.From, p.To, err1, err2)
			continue
		}
		if err := tlog.CheckTree(proof, p.To, to, p.From, from); err != nil {
			fail("consistency %d..%d: %v", p.From, p.To, err)
			continue
		}
		checked["consistency"]++
	}

	for _, tl := range j.Tiles {
		tile, err := tlog.ParseTilePath("tile/8/" + tl.Path)
		if err != nil {
			fail("tile %s: %v", tl.Path, err)
			continue
		}
		want, err := tlog.ReadTileData(tile, t)
		got, err2 := base64.StdEncoding.DecodeString(tl.Data)
		if err != nil || err2 != nil || string(want) != string(got) {
			fail("tile %s: not the tile tlog computes (%v %v)", tl.Path, err, err2)
			continue
		}
		checked["tiles"]++
	}

	out, _ := json.Marshal(map[string]any{"checked": checked, "errors": errs})
	fmt.Println(string(out))
	if len(errs) > 0 {
		os.Exit(1)
	}
}
