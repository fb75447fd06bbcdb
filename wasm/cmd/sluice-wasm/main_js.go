//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/bridge"
)

func main() {
	api := bridge.Export()
	global := js.Global()
	if boot := global.Get("__sluiceBoot"); boot.Type() == js.TypeFunction {
		global.Delete("__sluiceBoot")
		boot.Invoke(api)
	} else {
		global.Set("sluiceGo", api)
	}
	select {}
}
