// Command gojson is the tests' ground truth for generator/data/gojson.py: it writes JSON
// documents exactly as aicr writes its data files, with Go's encoding/json
// MarshalIndent(v, "", "  ") plus a trailing newline.
//
// It reads a stream of JSON documents on stdin (one per line, or any whitespace between them)
// and answers each with its marshalled bytes followed by one NUL byte (which JSON text never
// holds), flushed at once, so one process can answer a whole test session.
//
// Numbers are decoded as aicr's types hold them: a number written with a fraction or an
// exponent is a float64 (as Go's interface{} decoding does), one written as an integer is an
// int64 (aicr's int fields), or, beyond 64 bits, its digits as they are. Objects are maps, so
// keys come out sorted, as in aicr's output. Standard library only: it builds offline.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// typed replaces every json.Number in v by the Go value aicr would hold.
func typed(v interface{}) (interface{}, error) {
	switch t := v.(type) {
	case map[string]interface{}:
		for key, item := range t {
			value, err := typed(item)
			if err != nil {
				return nil, err
			}
			t[key] = value
		}
	case []interface{}:
		for i, item := range t {
			value, err := typed(item)
			if err != nil {
				return nil, err
			}
			t[i] = value
		}
	case json.Number:
		text := string(t)
		if strings.ContainsAny(text, ".eE") {
			f, err := strconv.ParseFloat(text, 64)
			return f, err
		}
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(text, 10, 64); err == nil {
			return u, nil
		}
		return t, nil
	}
	return v, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gojson:", err)
	os.Exit(1)
}

func main() {
	decoder := json.NewDecoder(os.Stdin)
	decoder.UseNumber()
	out := bufio.NewWriter(os.Stdout)
	for {
		var document interface{}
		err := decoder.Decode(&document)
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(err)
		}
		if document, err = typed(document); err != nil {
			fail(err)
		}
		text, err := json.MarshalIndent(document, "", "  ")
		if err != nil {
			fail(err)
		}
		out.Write(text)
		out.WriteString("\n\x00")
		if err := out.Flush(); err != nil {
			fail(err)
		}
	}
}
