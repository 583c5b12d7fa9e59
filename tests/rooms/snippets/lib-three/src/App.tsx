import { useEffect, useRef } from "react";
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

export default function App() {
  const mount = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = mount.current!;
    const scene = new THREE.Scene();
    scene.background = new THREE.Color("#f1f5f9");
    const camera = new THREE.PerspectiveCamera(60, 400 / 300, 0.1, 100);
    camera.position.set(2, 2, 3);
    const renderer = new THREE.WebGLRenderer({ antialias: true });
    renderer.setSize(400, 300);
    el.appendChild(renderer.domElement);
    const cube = new THREE.Mesh(
      new THREE.BoxGeometry(1, 1, 1),
      new THREE.MeshStandardMaterial({ color: "#2563eb" }),
    );
    scene.add(cube, new THREE.AmbientLight(0xffffff, 0.6));
    const light = new THREE.DirectionalLight(0xffffff, 1);
    light.position.set(3, 4, 5);
    scene.add(light);
    const controls = new OrbitControls(camera, renderer.domElement);
    let frame = 0;
    const tick = () => {
      cube.rotation.y += 0.01;
      controls.update();
      renderer.render(scene, camera);
      frame = requestAnimationFrame(tick);
    };
    tick();
    return () => {
      cancelAnimationFrame(frame);
      controls.dispose();
      renderer.dispose();
      el.removeChild(renderer.domElement);
    };
  }, []);
  return (
    <main>
      <h1>Spinning cube</h1>
      <div ref={mount} className="stage" />
    </main>
  );
}
